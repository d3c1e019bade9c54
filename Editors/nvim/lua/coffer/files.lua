-- `coffer://` file buffers: read through `files/read`, written through `files/write` with
-- `ifVersion`, in the file's own encoding and line endings.
local client = require("coffer.client")
local paths = require("coffer.paths")
local M = {}

-- Coffer's charset names and Neovim's 'fileencoding'.
local to_fenc = { ["UTF-8"] = "utf-8", ["UTF-16LE"] = "utf-16le", ["UTF-16BE"] = "utf-16", ["GB18030"] = "gb18030" }
local to_charset = { ["utf-8"] = "utf-8", ["utf-16le"] = "utf-16le", ["ucs-2le"] = "utf-16le", ["utf-16"] = "utf-16be",
                     ["ucs-2"] = "utf-16be", ["gb18030"] = "gb18030", ["cp936"] = "gb18030", ["gbk"] = "gb18030",
                     ["euc-cn"] = "gb18030" }

local function say(message, level)
  vim.notify("coffer: " .. message, level or vim.log.levels.INFO)
end
M.say = say

--- Reads the whole text of `path` in pieces, showing progress for big files.
--- Returns text, charset, bom, version; or nil and the error.
function M.read_text(path)
  local pieces, offset, charset, bom, version, size = {}, 0, "UTF-8", false, nil, nil
  while true do
    local answer, err, kind = client.request("files/read", { path = path, offset = offset, length = client.config.piece,
                                                              encoding = "text" })
    if err then return nil, err, kind end
    table.insert(pieces, answer.data)
    charset, bom, version, size = answer.charset or charset, answer.bom or bom, answer.version, answer.size
    offset = offset + answer.bytes
    if answer.eof or answer.bytes == 0 then break end
    vim.api.nvim_echo({ { string.format("coffer: reading %s, %d of %d KB", path, offset / 1024, size / 1024) } }, false, {})
    vim.cmd("redraw")
  end
  if size and size > client.config.piece then vim.api.nvim_echo({ { "" } }, false, {}) end
  return table.concat(pieces), charset, bom, version
end

--- Fills `buf` with `text` as Neovim reads a file: lines, 'fileformat', 'eol'.
local function fill(buf, text)
  local dos = text:find("\r\n", 1, true) ~= nil
  if dos then text = text:gsub("\r\n", "\n") end
  local eol = text:sub(-1) == "\n"
  if eol then text = text:sub(1, -2) end
  local lines = vim.split(text, "\n", { plain = true })
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].fileformat = dos and "dos" or "unix"
  vim.bo[buf].eol = eol or #text == 0
  vim.bo[buf].fixeol = eol or #text == 0
end

--- BufReadCmd: the file's text, or an empty buffer for a new file.
function M.read(buf, name)
  local path = paths.from_name(name)
  local text, charset, bom, version = M.read_text(path)
  if not text then
    local err, kind = charset, bom
    if kind == "noSuchFile" then
      vim.b[buf].coffer_path, vim.b[buf].coffer_version = path, nil
      vim.bo[buf].buftype = "acwrite"
      say("new file " .. path)
      return
    end
    say(err, vim.log.levels.ERROR)
    return
  end
  local view = vim.fn.winsaveview()
  vim.bo[buf].modifiable = true
  fill(buf, text)
  vim.bo[buf].fileencoding = to_fenc[charset] or "utf-8"
  vim.bo[buf].bomb = bom and true or false
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].modified = false
  vim.b[buf].coffer_path, vim.b[buf].coffer_version = path, version
  vim.fn.winrestview(view)
  pcall(vim.cmd, "doautocmd <nomodeline> BufRead " .. vim.fn.fnameescape(name))
  require("coffer.watch").follow(buf, path)
end

--- The buffer's text as it is written: its lines, 'fileformat', 'eol'.
local function text_of(buf, first, last)
  local lines = vim.api.nvim_buf_get_lines(buf, first or 0, last or -1, false)
  local newline = vim.bo[buf].fileformat == "dos" and "\r\n" or "\n"
  local text = table.concat(lines, newline)
  if (vim.bo[buf].eol or vim.bo[buf].fixeol) and not (#lines == 1 and lines[1] == "") then text = text .. newline end
  return text
end

--- The charset to write in, from 'fileencoding' and 'bomb'.
local function charset_of(buf)
  local fenc = vim.bo[buf].fileencoding
  if fenc == "" then fenc = "utf-8" end
  local charset = to_charset[fenc:lower()]
  if not charset then return nil, "Coffer cannot write “" .. fenc .. "”; :set fileencoding=utf-8 to save" end
  if charset == "utf-8" and vim.bo[buf].bomb then charset = "utf-8-bom" end
  return charset
end

--- BufWriteCmd (and FileWriteCmd for another name): saved over the version read, unless `:write!`.
--- When the file changed since it was read, Coffer asks (conflict/ask): overwrite, keep both,
--- keep it in files:/Recovered, or cancel (the buffer stays modified).
function M.write(buf, name, whole)
  local path = paths.from_name(name)
  local charset, problem = charset_of(buf)
  if not charset then return say(problem, vim.log.levels.ERROR) end
  local same = vim.b[buf].coffer_path == path
  local params = { path = path, data = text_of(buf, whole and 0 or nil, whole and -1 or nil), charset = charset }
  if vim.v.cmdbang == 1 then
    params.conflict = "replace"
  elseif same and vim.b[buf].coffer_version then
    params.ifVersion = vim.b[buf].coffer_version
    params.conflict = "ask"
  else
    params.conflict = "fail"
  end
  local node, err, kind = client.request("files/write", params)
  if err then
    if kind == "changedSinceRead" or (kind == "fileExists" and params.conflict == "fail") then
      say(err .. " — :Coffer diff shows it now; :write! overwrites it.", vim.log.levels.ERROR)
    else
      say(err, vim.log.levels.ERROR)
    end
    return
  end
  if params.ifVersion and node.path ~= path then
    -- Kept aside (a copy beside it, or in files:/Recovered): the buffer still edits the file.
    say(string.format("“%s” changed meanwhile; yours is saved as “%s”", path, node.path))
    vim.bo[buf].modified = false
    return
  end
  if same or vim.api.nvim_buf_get_name(buf) == name then
    vim.b[buf].coffer_path, vim.b[buf].coffer_version = path, node.version
    vim.bo[buf].modified = false
    require("coffer.watch").follow(buf, path)
  end
  say(string.format("“%s” %dB written", node.path, node.size or 0))
end

--- `:Coffer diff`: the file as it is now in Coffer, beside the buffer, in diff mode.
function M.diff()
  local buf = vim.api.nvim_get_current_buf()
  local path = vim.b[buf].coffer_path
  if not path then return say("not a coffer:// file buffer", vim.log.levels.ERROR) end
  local text, err = M.read_text(path)
  if not text then return say(err, vim.log.levels.ERROR) end
  local ft = vim.bo[buf].filetype
  vim.cmd("diffthis")
  vim.cmd("vertical new")
  local scratch = vim.api.nvim_get_current_buf()
  fill(scratch, text)
  vim.bo[scratch].buftype, vim.bo[scratch].bufhidden, vim.bo[scratch].swapfile = "nofile", "wipe", false
  vim.bo[scratch].filetype = ft
  vim.bo[scratch].modifiable = false
  pcall(vim.api.nvim_buf_set_name, scratch, "coffer-now://" .. path)
  vim.cmd("diffthis")
end

return M
