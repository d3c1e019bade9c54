-- Coffer for Neovim: `coffer://` buffers and folder buffers over `coffer rpc`.
-- See `:help coffer` and Editors/nvim/README.md.
local client = require("coffer.client")
local paths = require("coffer.paths")
local files = require("coffer.files")
local M = {}

--- `require("coffer").setup{ cmd = "coffer", container = DIR, socket = PATH, allow_host = {DIR…}, confirm = true }`.
function M.setup(options)
  client.config = vim.tbl_extend("force", client.config, options or {})
end

local function fail(err)
  local message = type(err) == "table" and err.message or tostring(err)
  files.say(message, vim.log.levels.ERROR)
end

--- The folder a command acts in: the folder buffer's, the file buffer's, or `files:/`.
local function here()
  local buf = vim.api.nvim_get_current_buf()
  if vim.b[buf].coffer_folder then return vim.b[buf].coffer_folder end
  if vim.b[buf].coffer_path then return paths.parent(vim.b[buf].coffer_path) or "files:/" end
  return "files:/"
end

local commands = {}

function commands.find(arguments)
  local query = table.concat(arguments, " ")
  if query == "" then return fail("usage: :Coffer find PATTERN") end
  local answer = client.call("files/search", { query = query, path = here() })
  local items = {}
  for _, node in ipairs(answer.matches) do
    table.insert(items, { filename = paths.to_name(node.path, node.kind ~= "file"), lnum = 1,
                          text = node.kind == "file" and node.path or node.path .. "/" })
  end
  vim.fn.setqflist({}, " ", { title = "Coffer find " .. query, items = items })
  if #items > 0 then vim.cmd("copen") end
  files.say(string.format("%d match%s%s", #items, #items == 1 and "" or "es", answer.truncated and " (more not shown)" or ""))
end

function commands.trash()
  local answer = client.call("trash/list")
  local lines = {}
  for _, item in ipairs(answer.items) do
    table.insert(lines, string.format("%s\t%s\t%s", item.trashId, item.originalPath, item.deletedAt))
  end
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile, vim.bo[buf].modifiable = "nofile", "wipe", false, false
  pcall(vim.api.nvim_buf_set_name, buf, "coffer-trash://")
  vim.keymap.set("n", "R", function()
    local id = vim.api.nvim_get_current_line():match("^([^\t]+)")
    if id then commands.restore({ id }) end
  end, { buffer = buf, desc = "Restore the item" })
  files.say(#lines == 0 and "the trash is empty" or "R restores the item under the cursor")
end

function commands.restore(arguments)
  local id = arguments[1]
  if not id then return fail("usage: :Coffer restore TRASH-ID") end
  local node = client.call("trash/restore", { trashId = id })
  files.say("restored " .. node.path)
  if vim.b.coffer_folder == nil and vim.bo.buftype == "nofile" then
    local answer = client.request("trash/list")
    if answer then
      local lines = {}
      for _, item in ipairs(answer.items) do
        table.insert(lines, string.format("%s\t%s\t%s", item.trashId, item.originalPath, item.deletedAt))
      end
      vim.bo.modifiable = true
      vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
      vim.bo.modifiable = false
    end
  end
end

function commands.import(arguments)
  if #arguments == 0 then return fail("usage: :Coffer import HOST-PATH…") end
  local hostPaths = {}
  for _, path in ipairs(arguments) do table.insert(hostPaths, (vim.fn.fnamemodify(vim.fn.expand(path), ":p"):gsub("/$", ""))) end
  local answer = client.call("host/import", { hostPaths = hostPaths, toDirectory = here() })
  local done = {}
  for _, item in ipairs(answer.results or {}) do
    if item.node then table.insert(done, item.node.path) elseif item.error then fail(item.error.message or "") end
  end
  if #done > 0 then files.say("imported " .. table.concat(done, ", ")) end
end

function commands.export(arguments)
  local buf = vim.api.nvim_get_current_buf()
  local entry = vim.b[buf].coffer_folder and require("coffer.folders").current_entry(buf)
  local path = entry and entry.path or vim.b[buf].coffer_path
  if not path then return fail("usage: :Coffer export [HOST-FOLDER] in a coffer:// buffer") end
  local folder = vim.fn.fnamemodify(vim.fn.expand(arguments[1] or "."), ":p")
  local answer = client.call("host/export", { path = path, hostDirectory = folder })
  files.say("exported to " .. answer.hostPath)
end

function commands.diff() files.diff() end

--- `:Coffer versions` (`:CofferVersions`): the versions of the file buffer's file, newest first;
--- `R` puts the one under the cursor back (what the file has becomes a version in turn) and
--- reads the file buffer again.
function commands.versions()
  local file_buf = vim.api.nvim_get_current_buf()
  local path = vim.b[file_buf].coffer_path
  if not path then return fail("usage: :CofferVersions in a coffer:// file buffer") end
  local function lines_of(answer)
    local lines = {}
    for _, version in ipairs(answer.versions) do
      table.insert(lines, string.format("%d\t%s\t%d\t%s", version.id, version.date, version.size, version.frontEnd or "-"))
    end
    return lines
  end
  local lines = lines_of(client.call("files/versions", { path = path }))
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile, vim.bo[buf].modifiable = "nofile", "wipe", false, false
  pcall(vim.api.nvim_buf_set_name, buf, "coffer-versions://" .. path)
  vim.keymap.set("n", "R", function()
    local id = tonumber(vim.api.nvim_get_current_line():match("^(%d+)"))
    if not id then return end
    local ok, err = pcall(function()
      client.call("files/restoreVersion", { path = path, id = id })
      files.say(string.format("restored version %d of %s", id, path))
      if vim.api.nvim_buf_is_valid(file_buf) and not vim.bo[file_buf].modified then
        vim.api.nvim_buf_call(file_buf, function() vim.cmd("edit!") end)
      end
      vim.bo[buf].modifiable = true
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines_of(client.call("files/versions", { path = path })))
      vim.bo[buf].modifiable = false
    end)
    if not ok then fail(err) end
  end, { buffer = buf, desc = "Restore the version" })
  files.say(#lines == 0 and (path .. " has no versions") or "R restores the version under the cursor")
end

--- `:Coffer [PATH]` opens a folder buffer; `:Coffer SUBCOMMAND …` runs one.
function M.command(opts)
  local arguments = opts.fargs
  local name = arguments[1]
  local ok, err = pcall(function()
    if name and commands[name] then
      commands[name](vim.list_slice(arguments, 2))
    else
      local path = name and paths.parse(name) or here()
      vim.cmd("edit " .. vim.fn.fnameescape(paths.to_name(path, true)))
    end
  end)
  if not ok then fail(err) end
end

function M.complete(lead, line)
  if line:match("^%s*Coffer%s+%S*$") then
    return vim.tbl_filter(function(word) return word:find(lead, 1, true) == 1 end,
      { "find", "trash", "restore", "import", "export", "diff", "versions" })
  end
  return {}
end

return M
