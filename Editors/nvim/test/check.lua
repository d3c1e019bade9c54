-- Drives the plugin in `nvim --headless -u NONE` with real keystrokes and commands, and checks
-- what Coffer has on disk. Run by .ci/nvim_check.py, which sets:
--   COFFER_BIN        the coffer binary
--   COFFER_CONTAINER  a fresh container (its files are in Documents/UserFiles)
--   COFFER_SCENARIO   `single` (a server of its own), or `writer` / `reader` (two Neovims on
--                     one `coffer rpc --listen` socket, COFFER_SOCKET)
-- It exits with status 0 when every check held, 1 otherwise (each failure is printed).
local env = vim.env
local bin, container, scenario = env.COFFER_BIN, env.COFFER_CONTAINER, env.COFFER_SCENARIO
local files = container .. "/Documents/UserFiles/"
local failures, messages = 0, {}

vim.notify = function(message) table.insert(messages, message) end

local function check(condition, what)
  if condition then
    io.stdout:write("nvim_check: ok: " .. what .. "\n")
  else
    failures = failures + 1
    io.stdout:write("nvim_check: FAILED: " .. what .. "\n  messages: " .. table.concat(messages, " | ") .. "\n")
  end
end

local function disk(name)
  local file = io.open(files .. name, "rb")
  if not file then return nil end
  local bytes = file:read("*a")
  file:close()
  return bytes
end

local function put(name, bytes)
  local file = assert(io.open(files .. name, "wb"))
  file:write(bytes)
  file:close()
end

local function keys(text)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(text, true, false, true), "xt", false)
end

local function said(fragment)
  for _, message in ipairs(messages) do
    if message:find(fragment, 1, true) then return true end
  end
  return false
end

local function lines() return vim.api.nvim_buf_get_lines(0, 0, -1, false) end

local function finish()
  require("coffer.client").stop()
  io.stdout:write(string.format("nvim_check: %s: %s\n", scenario, failures == 0 and "every check held" or failures .. " failed"))
  vim.cmd(failures == 0 and "qall!" or "cquit! 1")
end

local coffer = require("coffer")

if scenario == "single" then
  coffer.setup({ cmd = bin, container = container, confirm = false, allow_host = { env.COFFER_HOST } })
  vim.cmd("helptags " .. vim.fn.fnameescape(env.COFFER_PLUGIN .. "/doc"))
  vim.cmd("help coffer-folders")
  check(vim.fn.expand("%:t") == "coffer.txt" and vim.fn.getline("."):find("Folder buffers", 1, true) ~= nil, ":help coffer works")
  vim.cmd("close")
  vim.fn.mkdir(files .. "Notes", "p")
  put("Notes/a.md", "# Plan\nfirst\n")

  -- Open, edit with keystrokes, write: on disk.
  vim.cmd("edit coffer://files/Notes/a.md")
  check(table.concat(lines(), "\n") == "# Plan\nfirst", "a coffer:// buffer reads the file")
  check(vim.bo.fileformat == "unix" and vim.bo.fileencoding == "utf-8", "its format and encoding follow the file")
  keys("Gosecond<Esc>")
  vim.cmd("write")
  check(disk("Notes/a.md") == "# Plan\nfirst\nsecond\n", ":write saves it")
  check(not vim.bo.modified, "the buffer is no longer modified")

  -- Someone else saves meanwhile: refused, nothing lost, then forced.
  vim.fn.system({ bin, "--container", container, "-c", "write --replace Notes/a.md" }, "theirs\n")
  keys("Gothird<Esc>")
  messages = {}
  -- Coffer asks (conflict/ask, kind changedSinceRead); answered here "Cancel".
  local questions = {}
  local confirm_before = vim.fn.confirm
  vim.fn.confirm = function(message, choices)
    table.insert(questions, { message = message, choices = choices })
    local list = vim.split(choices, "\n")
    return #list
  end
  vim.cmd("write")
  vim.fn.confirm = confirm_before
  check(#questions == 1 and questions[1].message:find("was changed by someone else", 1, true) ~= nil
        and questions[1].choices:find("Keep in &Recovered", 1, true) ~= nil,
        "a save over a changed file asks, with every choice: " .. vim.inspect(questions))
  check(disk("Notes/a.md") == "theirs\n", "a save over a changed file, cancelled, is refused")
  check(vim.bo.modified and said("was changed by someone else") and said(":write!"),
        "the refusal says the file changed and offers :Coffer diff and :write!")
  vim.cmd("Coffer diff")
  check(table.concat(lines(), "\n") == "theirs" and vim.wo.diff, ":Coffer diff shows the file as it is now")
  vim.cmd("close")
  vim.cmd("write!")
  check(disk("Notes/a.md") == "# Plan\nfirst\nsecond\nthird\n", ":write! overwrites it")
  -- What :write! replaced is a version: :CofferVersions lists it, R puts it back.
  vim.cmd("CofferVersions")
  check(vim.api.nvim_buf_get_name(0) == "coffer-versions://files:/Notes/a.md" and #lines() >= 2,
        ":CofferVersions lists the versions: " .. table.concat(lines(), " | "))
  local newest = lines()[1]
  keys("R")
  check(disk("Notes/a.md") == "theirs\n", "R puts the version under the cursor back: " .. tostring(disk("Notes/a.md")))
  check(lines()[1] ~= newest, "and what the file had is a version in turn")
  vim.cmd("close")
  check(table.concat(lines(), "\n") == "theirs", "the file buffer reads the restored file again")
  vim.cmd("write!")
  vim.cmd("silent! %d")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { "# Plan", "first", "second", "third" })
  vim.cmd("write!")
  check(disk("Notes/a.md") == "# Plan\nfirst\nsecond\nthird\n", "and is written again")

  -- A person who takes longer to answer than the request's timeout still gets their save:
  -- the time a question is open is not the server's.
  vim.fn.system({ bin, "--container", container, "-c", "write --replace Notes/a.md" }, "theirs again\n")
  keys("Gofourth<Esc>")
  local client = require("coffer.client")
  local timeout_before = client.config.timeout
  client.config.timeout = 2000
  vim.fn.confirm = function(message, choices)
    vim.loop.sleep(5000)
    for index, choice in ipairs(vim.split(choices, "\n")) do
      if choice == "&Overwrite" then return index end
    end
    return 0
  end
  vim.cmd("write")
  vim.fn.confirm = confirm_before
  client.config.timeout = timeout_before
  check(disk("Notes/a.md") == "# Plan\nfirst\nsecond\nthird\nfourth\n" and not vim.bo.modified,
        "an answer slower than the timeout still saves: " .. tostring(disk("Notes/a.md")))

  -- A new file, and :saveas.
  vim.cmd("edit coffer://files/Notes/new.md")
  keys("inew text<Esc>")
  vim.cmd("write")
  check(disk("Notes/new.md") == "new text\n", "a new file is created")
  vim.cmd("saveas coffer://files/Notes/copy.md")
  check(disk("Notes/copy.md") == "new text\n" and vim.api.nvim_buf_get_name(0) == "coffer://files/Notes/copy.md",
        ":saveas writes a coffer:// copy")

  -- A UTF-16 file with CRLF stays UTF-16 with CRLF.
  put("wide.txt", "\255\254h\0i\0\r\0\n\0")
  vim.cmd("edit coffer://files/wide.txt")
  check(vim.bo.fileencoding == "utf-16le" and vim.bo.bomb and vim.bo.fileformat == "dos",
        "a UTF-16 file reads as utf-16le with its mark and CRLF")
  keys("Goyo<Esc>")
  vim.cmd("write")
  check(disk("wide.txt") == "\255\254h\0i\0\r\0\n\0y\0o\0\r\0\n\0", "and is written back as UTF-16 with CRLF")

  -- A big file, read in pieces.
  coffer.setup({ piece = 65536 })
  put("big.txt", string.rep("0123456789abcdef\n", 20000))
  vim.cmd("edit coffer://files/big.txt")
  check(#lines() == 20000 and lines()[20000] == "0123456789abcdef", "a big file is read in pieces, whole")
  coffer.setup({ piece = 1048576 })

  -- A folder buffer: Coffer's order; renames, creates and trashes through edited lines.
  put("Notes/b.txt", "b")
  put("Notes/old.txt", "old")
  put("Notes/file10.txt", "10")
  put("Notes/file2.txt", "2")
  vim.fn.mkdir(files .. "Notes/Sub", "p")
  vim.cmd("Coffer Notes")
  local shown = vim.tbl_map(function(line) return line:gsub("^/%d+ ", "") end, lines())
  check(table.concat(shown, ",") == "Sub/,a.md,b.txt,copy.md,file2.txt,file10.txt,new.md,old.txt",
        "a folder buffer lists folders first, in natural order: " .. table.concat(shown, ","))
  keys("/b.txt<CR>")
  vim.cmd([[s/b\.txt$/renamed.txt/]])
  keys("/old.txt<CR>dd")
  keys("Gomade.txt<Esc>oMade Folder/<Esc>")
  vim.cmd("write")
  check(disk("Notes/renamed.txt") == "b" and disk("Notes/b.txt") == nil, "a changed line renames")
  check(disk("Notes/old.txt") == nil and vim.fn.system({ bin, "--container", container, "-c", "trash" }):find("old.txt", 1, true),
        "a deleted line trashes")
  check(disk("Notes/made.txt") == "" and vim.fn.isdirectory(files .. "Notes/Made Folder") == 1,
        "new lines create a file and a folder")
  check(not vim.bo.modified and vim.tbl_contains(vim.tbl_map(function(line) return line:gsub("^/%d+ ", "") end, lines()), "renamed.txt"),
        "the folder buffer lists the folder again")
  -- A rename onto a taken name: Coffer asks (conflict/ask), answered here "Keep both".
  local asked = {}
  local confirm = vim.fn.confirm
  vim.fn.confirm = function(message, choices)
    table.insert(asked, message)
    for index, choice in ipairs(vim.split(choices, "\n")) do
      if choice:find("Keep both", 1, true) then return index end
    end
    return 0
  end
  keys("gg/new.md<CR>")
  vim.cmd([[s/new\.md$/renamed.txt/]])
  vim.cmd("write")
  vim.fn.confirm = confirm
  check(#asked == 1 and asked[1]:find("already exists in files:/Notes", 1, true) ~= nil,
        "a rename onto a taken name asks what Coffer says is there: " .. table.concat(asked, " | "))
  check(disk("Notes/renamed (2).txt") == "new text\n" and disk("Notes/renamed.txt") == "b", "keep both keeps both")
  keys("gg/renamed.txt<CR><CR>")
  check(vim.api.nvim_buf_get_name(0) == "coffer://files/Notes/renamed.txt" and lines()[1] == "b", "<CR> opens the item")
  vim.cmd("Coffer Notes")
  keys("-")
  check(vim.api.nvim_buf_get_name(0) == "coffer://files/" and vim.b.coffer_folder == "files:/", "- goes up")

  -- Import, export, and the trash with restore.
  local host = env.COFFER_HOST
  local source = assert(io.open(host .. "/from host.txt", "w"))
  source:write("host\n")
  source:close()
  vim.fn.mkdir(host .. "/out", "p")
  vim.cmd("Coffer Notes")
  vim.cmd("Coffer import " .. vim.fn.fnameescape(host .. "/from host.txt"))
  check(disk("Notes/from host.txt") == "host\n", ":Coffer import copies a host file into the folder")
  vim.cmd("edit " .. vim.fn.fnameescape("coffer://files/Notes/from host.txt"))
  vim.cmd("Coffer export " .. vim.fn.fnameescape(host .. "/out"))
  local exported = io.open(host .. "/out/from host.txt")
  check(exported ~= nil and exported:read("*a") == "host\n", ":Coffer export copies it out")
  if exported then exported:close() end
  vim.cmd("Coffer trash")
  keys("/old.txt<CR>R")
  check(disk("Notes/old.txt") == "old", ":Coffer trash lists the trash and R restores an item")
  vim.cmd("close")

  -- Find into the quickfix list.
  vim.fn.system({ bin, "--container", container, "-c", "reindex" })
  vim.cmd("Coffer find renamed")
  local found = vim.fn.getqflist()
  local names = vim.tbl_map(function(item) return vim.api.nvim_buf_get_name(item.bufnr) end, found)
  check(#found == 2 and names[1] == "coffer://files/Notes/renamed (2).txt" and names[2] == "coffer://files/Notes/renamed.txt",
        ":Coffer find fills the quickfix list: " .. table.concat(names, ", "))

  -- Changes made by others arrive: an unmodified buffer reads the file again.
  vim.cmd("cclose")
  vim.cmd("edit coffer://files/Notes/copy.md")
  vim.fn.system({ bin, "--container", container, "-c", "write --replace Notes/copy.md" }, "changed outside\n")
  vim.wait(5000, function() return lines()[1] == "changed outside" end, 50)
  check(lines()[1] == "changed outside" and not vim.bo.modified, "a change by another front end reloads an unmodified buffer")

  -- The server gone mid-session: a clear message, no hang, and the next request starts it again.
  messages = {}
  vim.loop.kill(require("coffer.client").pid(), 9)
  vim.wait(5000, function() return said("server stopped") end, 50)
  check(said("server stopped"), "a server that dies is reported: " .. table.concat(messages, " | "))
  keys("Goagain<Esc>")
  vim.cmd("write")
  check(disk("Notes/copy.md") == "changed outside\nagain\n", "the next save starts the server again")
  finish()
elseif scenario == "writer" or scenario == "reader" then
  coffer.setup({ cmd = bin, socket = env.COFFER_SOCKET, confirm = false })
  vim.cmd("edit coffer://files/shared.md")
  check(lines()[1] == "v1", scenario .. ": opens the shared file")
  if scenario == "reader" then
    local ready = io.open(env.COFFER_READY, "w")
    ready:write("ready")
    ready:close()
    vim.wait(20000, function() return lines()[1] == "v2 from the other Neovim" end, 50)
    check(lines()[1] == "v2 from the other Neovim" and not vim.bo.modified, "reader: the other Neovim's save reloads the buffer")
  else
    vim.wait(20000, function() return vim.loop.fs_stat(env.COFFER_READY) ~= nil end, 50)
    keys("ccv2 from the other Neovim<Esc>")
    vim.cmd("write")
    check(disk("shared.md") == "v2 from the other Neovim\n", "writer: saved through the shared server")
  end
  finish()
end
