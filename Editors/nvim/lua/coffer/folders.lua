-- Folder buffers, as oil.nvim makes them: one line per item (folders end in `/`), in Coffer's
-- order. Editing the lines and `:write` renames (a changed line), creates (a new line; a
-- trailing `/` makes a folder) and trashes (a deleted line), after a confirmation.
--
-- Each line starts with a concealed `/ID ` naming the item it was listed as, so a changed
-- line is a rename however the lines moved.
local client = require("coffer.client")
local paths = require("coffer.paths")
local files = require("coffer.files")
local M = {}

local function entry_line(id, entry)
  return string.format("/%d %s%s", id, entry.name, entry.kind == "file" and "" or "/")
end

--- Every entry of `path`, page after page.
local function list(path)
  local entries, offset = {}, 0
  while true do
    local answer, err = client.request("files/list", { path = path, offset = offset })
    if err then return nil, err end
    vim.list_extend(entries, answer.entries)
    offset = offset + #answer.entries
    if offset >= answer.total or #answer.entries == 0 then return entries end
  end
end

--- BufReadCmd for `coffer://MOUNT/FOLDER/`: the listing.
function M.read(buf, name)
  local path = paths.from_name(name)
  local entries, err = list(path)
  if not entries then return files.say(err, vim.log.levels.ERROR) end
  local lines = {}
  for id, entry in ipairs(entries) do table.insert(lines, entry_line(id, entry)) end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "coffer"
  vim.b[buf].coffer_folder = path
  vim.b[buf].coffer_entries = entries
  local window = vim.fn.bufwinid(buf)
  if window ~= -1 then
    vim.wo[window].conceallevel = 3
    vim.wo[window].concealcursor = "nvic"
  end
  vim.cmd([[syntax match CofferId /^\/\d\+ / conceal]])
  vim.cmd([[syntax match CofferFolder /[^/]\+\/$/]])
  vim.cmd([[highlight default link CofferFolder Directory]])
  vim.keymap.set("n", "<CR>", function() M.open_line(buf) end, { buffer = buf, desc = "Open the item" })
  vim.keymap.set("n", "-", function() M.up(buf) end, { buffer = buf, desc = "The folder above" })
  local group = vim.api.nvim_create_augroup("coffer_folder_" .. buf, { clear = true })
  vim.api.nvim_create_autocmd("CursorMoved", { group = group, buffer = buf, callback = function()
    -- Keep the cursor off the concealed ID.
    local row, col = unpack(vim.api.nvim_win_get_cursor(0))
    local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
    local prefix = #(line:match("^/%d+ ") or "")
    if col < prefix then vim.api.nvim_win_set_cursor(0, { row, prefix }) end
  end })
  require("coffer.watch").follow(buf, path, true)
end

--- A line as what it names: the entry it was listed as (or nil for a new line), and its name.
local function parse(line)
  local id, name = line:match("^/(%d+) (.*)$")
  if id then return tonumber(id), name end
  return nil, line
end

--- What the buffer's lines ask for, compared with the listing.
function M.changes(buf)
  local entries = vim.b[buf].coffer_entries or {}
  local folder = vim.b[buf].coffer_folder
  local seen, changes = {}, {}
  for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local id, name = parse(line)
    local wants_folder = name:sub(-1) == "/"
    name = name:gsub("/+$", "")
    if name:match("^%s*$") then
      -- An empty line asks for nothing.
    elseif name:find("/", 1, true) then
      return nil, "“" .. name .. "”: a name cannot contain “/”"
    elseif id and entries[id] then
      if seen[id] then return nil, "“" .. entries[id].name .. "” is listed twice" end
      seen[id] = true
      if name ~= entries[id].name then
        table.insert(changes, { kind = "rename", from = entries[id], name = name })
      end
    else
      table.insert(changes, { kind = wants_folder and "folder" or "file", path = paths.join(folder, name), name = name })
    end
  end
  for id, entry in ipairs(entries) do
    if not seen[id] then table.insert(changes, { kind = "trash", from = entry }) end
  end
  return changes
end

local function describe(change)
  if change.kind == "rename" then return "rename " .. change.from.name .. " → " .. change.name end
  if change.kind == "trash" then return "trash " .. change.from.name end
  if change.kind == "folder" then return "create folder " .. change.name end
  return "create " .. change.name
end

--- BufWriteCmd: applies the changes, each through one operation, after a confirmation.
function M.write(buf)
  local changes, problem = M.changes(buf)
  if not changes then return files.say(problem, vim.log.levels.ERROR) end
  if #changes == 0 then
    vim.bo[buf].modified = false
    return
  end
  if client.config.confirm then
    local lines = {}
    for _, change in ipairs(changes) do table.insert(lines, "  " .. describe(change)) end
    local answer = vim.fn.confirm("Apply these changes?\n" .. table.concat(lines, "\n"), "&Yes\n&No", 2)
    if answer ~= 1 then return end
  end
  local failures = {}
  -- Renames first, so a name given up is free for a new item; trashes last.
  local order = { rename = 1, folder = 2, file = 2, trash = 3 }
  table.sort(changes, function(a, b) return order[a.kind] < order[b.kind] end)
  for _, change in ipairs(changes) do
    local _, err
    if change.kind == "rename" then
      -- A name taken: Coffer asks (conflict/ask), and the person chooses.
      _, err = client.request("files/rename", { path = change.from.path, newName = change.name, conflict = "ask" })
    elseif change.kind == "folder" then
      _, err = client.request("files/createDirectory", { path = change.path })
    elseif change.kind == "file" then
      _, err = client.request("files/write", { path = change.path, data = "", conflict = "fail" })
    else
      _, err = client.request("files/trash", { path = change.from.path })
    end
    if err then table.insert(failures, describe(change) .. ": " .. err) end
  end
  M.refresh(buf)
  if #failures > 0 then
    files.say(table.concat(failures, "\n"), vim.log.levels.ERROR)
  else
    files.say(string.format("%d change%s applied", #changes, #changes == 1 and "" or "s"))
  end
end

--- Lists the folder again (its changes applied or abandoned).
function M.refresh(buf)
  if not vim.api.nvim_buf_is_loaded(buf) then return end
  local view = vim.api.nvim_get_current_buf() == buf and vim.fn.winsaveview() or nil
  M.read(buf, vim.api.nvim_buf_get_name(buf))
  if view then vim.fn.winrestview(view) end
end

--- `<CR>`: opens the item on the cursor's line.
function M.open_line(buf)
  local line = vim.api.nvim_get_current_line()
  local id, name = parse(line)
  local entry = id and (vim.b[buf].coffer_entries or {})[id]
  if not entry then return files.say("“" .. name .. "” is not there yet: :write to create it", vim.log.levels.WARN) end
  vim.cmd("edit " .. vim.fn.fnameescape(paths.to_name(entry.path, entry.kind ~= "file")))
end

--- `-`: the folder above.
function M.up(buf)
  local parent = paths.parent(vim.b[buf].coffer_folder or "")
  if parent then vim.cmd("edit " .. vim.fn.fnameescape(paths.to_name(parent, true))) end
end

--- The item the cursor's line names, for commands (export).
function M.current_entry(buf)
  local id = parse(vim.api.nvim_get_current_line())
  return id and (vim.b[buf].coffer_entries or {})[id]
end

return M
