-- `coffer://MOUNT/PATH` buffer names and Coffer's virtual paths (`MOUNT:/PATH`).
local M = {}

--- The virtual path a buffer name stands for: `coffer://files/Notes/a.md` → `files:/Notes/a.md`.
--- A trailing `/` (a folder buffer) is kept out of the path and returned as `true`.
function M.from_name(name)
  local mount, rest = name:match("^coffer://([^/]+)(.*)$")
  if not mount then return nil end
  local folder = rest:sub(-1) == "/"
  rest = rest:gsub("/+$", "")
  return mount .. ":/" .. rest:gsub("^/", ""), folder
end

--- The buffer name of a virtual path; `folder` adds the trailing `/`.
function M.to_name(path, folder)
  local mount, rest = path:match("^([^:/]+):/?(.*)$")
  if not mount then mount, rest = "files", path:gsub("^/", "") end
  rest = rest:gsub("/+$", "")
  local name = "coffer://" .. mount .. "/" .. rest
  if folder and rest ~= "" then name = name .. "/" end
  return name
end

--- The folder holding `path` (`files:/Notes` for `files:/Notes/a.md`), or nil at a root.
function M.parent(path)
  local mount, rest = path:match("^([^:]+):/(.*)$")
  if not rest or rest == "" then return nil end
  local up = rest:match("^(.*)/[^/]*$") or ""
  return mount .. ":/" .. up
end

--- `path` joined with `name`.
function M.join(path, name)
  if path:sub(-1) == "/" then return path .. name end
  return path .. "/" .. name
end

--- What the user typed (`Notes`, `/Notes`, `files:/Notes`, `coffer://files/Notes`) as a virtual path.
function M.parse(text)
  if text:match("^coffer://") then return (M.from_name(text)) end
  if text:match("^[%w._-]+:") then return text end
  return "files:/" .. text:gsub("^/", "")
end

return M
