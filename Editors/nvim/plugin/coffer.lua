-- Coffer for Neovim: loaded by `packadd coffer` or a plugin manager. See `:help coffer`.
if vim.g.loaded_coffer then return end
vim.g.loaded_coffer = true

vim.api.nvim_create_user_command("Coffer", function(opts) require("coffer").command(opts) end, {
  nargs = "*", complete = function(lead, line) return require("coffer").complete(lead, line) end,
  desc = "Coffer: a folder buffer, or find | trash | restore | import | export | diff",
})

vim.api.nvim_create_user_command("CofferVersions", function()
  require("coffer").command({ fargs = { "versions" } })
end, { nargs = 0, desc = "Coffer: the versions of this file, R restores one" })

local group = vim.api.nvim_create_augroup("coffer", { clear = true })
local function is_folder(name) return name:sub(-1) == "/" end

-- No swap file: the file is Coffer's, shared with its other clients (another Neovim on the same
-- server would meet an "ATTENTION" prompt for every file), and a save never loses what it
-- replaces (Coffer keeps it as a version: `:CofferVersions`).
vim.api.nvim_create_autocmd("BufNew", { group = group, pattern = "coffer://*", callback = function(args)
  vim.bo[args.buf].swapfile = false
end })

vim.api.nvim_create_autocmd("BufReadCmd", { group = group, pattern = "coffer://*", callback = function(args)
  if is_folder(args.match) then
    require("coffer.folders").read(args.buf, args.match)
  else
    require("coffer.files").read(args.buf, args.match)
  end
end })

vim.api.nvim_create_autocmd("BufWriteCmd", { group = group, pattern = "coffer://*", callback = function(args)
  if is_folder(args.match) then
    require("coffer.folders").write(args.buf)
  else
    require("coffer.files").write(args.buf, args.match)
  end
end })

-- `:write coffer://…` of a buffer with another name.
vim.api.nvim_create_autocmd("FileWriteCmd", { group = group, pattern = "coffer://*", callback = function(args)
  require("coffer.files").write(args.buf, args.match, true)
end })

vim.api.nvim_create_autocmd("VimLeavePre", { group = group, callback = function()
  require("coffer.client").stop()
end })
