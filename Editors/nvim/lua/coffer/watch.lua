-- Changes made by others (another front end, another Neovim, a program on the host) arrive
-- as `files/didChange`: an unmodified file buffer is read again, a modified one is warned
-- about, and folder buffers list their folder again.
local client = require("coffer.client")
local paths = require("coffer.paths")
local M = {}

local watched = {}  -- path → watch id

--- Watches `path` (a folder for a folder buffer) once; only `files:` can be watched.
function M.follow(_, path, _)
  if watched[path] or not path:match("^files:") then return end
  local answer = client.request("files/watch", { path = path })
  if answer then watched[path] = answer.watchId end
end

local function loaded_buffers()
  return vim.tbl_filter(function(buf) return vim.api.nvim_buf_is_loaded(buf) end, vim.api.nvim_list_bufs())
end

local function file_changed(buf, path, kind)
  if vim.bo[buf].modified then
    if vim.b[buf].coffer_warned ~= vim.b[buf].coffer_version then
      vim.b[buf].coffer_warned = vim.b[buf].coffer_version
      require("coffer.files").say(path .. " was " .. (kind == "deleted" and "deleted" or "changed")
        .. " by someone else: :Coffer diff shows it, :write! overwrites it, :edit! reads it again", vim.log.levels.WARN)
    end
    return
  end
  if kind == "deleted" then return end
  local node = client.request("files/stat", { path = path })
  if not node or node.version == vim.b[buf].coffer_version then return end  -- our own save
  local name = vim.api.nvim_buf_get_name(buf)
  vim.api.nvim_buf_call(buf, function() require("coffer.files").read(buf, name) end)
end

client.on("files/didChange", function(params)
  for _, change in ipairs(params.changes or {}) do
    local parent = paths.parent(change.path)
    for _, buf in ipairs(loaded_buffers()) do
      if vim.b[buf].coffer_path == change.path then
        file_changed(buf, change.path, change.type)
      elseif vim.b[buf].coffer_folder and vim.b[buf].coffer_folder == parent and not vim.bo[buf].modified then
        require("coffer.folders").refresh(buf)
      end
    end
  end
end)

--- Forgets the watches (the server is gone or stopping).
function M.reset() watched = {} end

return M
