-- One `coffer rpc` per Neovim, through vim.lsp.rpc (JSON-RPC 2.0 with LSP framing on the
-- server's standard I/O). With `socket` set, the program started is `coffer rpc --connect
-- unix:PATH`, which joins standard I/O to a server already listening there, so several
-- Neovims share one server and see each other's changes.
local M = {}

M.config = {
  cmd = "coffer",        -- the program
  container = nil,       -- --container DIR (nil: Coffer's default container)
  socket = nil,          -- connect to `coffer rpc --listen unix:PATH` instead of starting a server
  allow_host = nil,      -- host folders import and export may use (nil: your home folder)
  confirm = true,        -- ask before applying a folder buffer's changes
  timeout = 30000,       -- milliseconds to wait for an answer
  piece = 1048576,       -- bytes read per request for big files
}

local rpc, closed, exit_code, stopping
-- When the person last answered a question of the server's (milliseconds, `now()`): the time
-- someone spends answering is not the server's to account for.
local answered_at = nil
local function now() return vim.loop.hrtime() / 1e6 end
local notification_handlers = {}
M.server = {}  -- what `initialize` answered

--- The session's language from Neovim's (`v:lang`): Chinese, else English.
function M.locale()
  local lang = (vim.v.lang or ""):lower()
  if lang:match("^zh") then return "zh-Hans" end
  return "en"
end

--- Handles server notifications of `method` with `handler(params)`.
function M.on(method, handler)
  notification_handlers[method] = handler
end

local function arguments()
  local config = M.config
  if config.socket then return { "rpc", "--connect", "unix:" .. config.socket } end
  local args = {}
  if config.container then vim.list_extend(args, { "--container", config.container }) end
  vim.list_extend(args, { "--lang", M.locale(), "rpc", "--framing", "lsp" })
  for _, folder in ipairs(config.allow_host or { vim.loop.os_homedir() }) do
    vim.list_extend(args, { "--allow-host", folder })
  end
  return args
end

--- The conflict question (`conflict/ask`): a name is taken, or (`kind` "changedSinceRead") a
--- save found its file changed since it was read; the person chooses.
local function ask(params)
  local choices = params.choices or { "replace", "keepBoth", "cancel" }
  local labels = { replace = "&Replace", overwrite = "&Overwrite", keepBoth = "&Keep both",
                   keepInRecovered = "Keep in &Recovered", cancel = "&Cancel" }
  local shown = {}
  for _, choice in ipairs(choices) do table.insert(shown, labels[choice] or choice) end
  local picked = vim.fn.confirm(params.message or "", table.concat(shown, "\n"), #shown)
  return choices[picked] or "cancel"
end

local function start()
  closed, exit_code = false, nil
  local dispatchers = {
    notification = function(method, params)
      local handler = notification_handlers[method]
      if handler then handler(params) end
    end,
    server_request = function(method, params)
      if method == "conflict/ask" then
        local ok, choice = pcall(ask, params)
        answered_at = now()
        return { choice = ok and choice or "cancel" }
      end
      return nil, { code = -32601, message = "unknown method " .. method }
    end,
    on_exit = function(code, signal)
      local was_running = rpc ~= nil and not stopping
      closed, exit_code, rpc = true, code, nil
      vim.schedule(function()
        local watch = package.loaded["coffer.watch"]
        if watch then watch.reset() end
        if was_running then
          vim.notify(string.format("coffer: the Coffer server stopped (exit status %d%s); it starts again at the next request",
            code, signal ~= 0 and ", signal " .. signal or ""), vim.log.levels.WARN)
        end
      end)
    end,
  }
  local ok, started = pcall(vim.lsp.rpc.start, M.config.cmd, arguments(), dispatchers)
  if not ok or not started then
    error("coffer: cannot start “" .. M.config.cmd .. "”: " .. tostring(started), 0)
  end
  rpc = started
  local answer, err = M.request("initialize", {
    clientInfo = { name = "coffer.nvim", version = "1" },
    locale = M.locale(),
    capabilities = { conflictQuestions = true },
  })
  if err then
    rpc = nil
    error("coffer: " .. err, 0)
  end
  M.server = answer
  rpc.notify("initialized", vim.empty_dict())
end

--- Sends `method` and waits for the answer: `result, nil` or `nil, message` (Coffer's user
--- message, in the session's language). Waits at most `timeout` after the request was sent or,
--- if the server asked a question meanwhile, after the person answered it; never for a server
--- that has stopped. A request given up on (the timeout, or Ctrl-C) is cancelled on the server.
function M.request(method, params)
  if not rpc and method ~= "initialize" then
    -- Not started yet, or stopped: start (again) for this request, as an LSP client would.
    local ok, err = pcall(start)
    if not ok then return nil, (tostring(err):gsub("^coffer: ", "")) end
  end
  if not rpc then return nil, "the Coffer server is not running" end
  local done, result, failure = false, nil, nil
  local client = rpc
  local sent, id = client.request(method, params, function(err, answer)
    done, result, failure = true, answer, err
  end)
  if not sent then return nil, "the Coffer server has stopped" end
  -- The clock runs from the later of the request and the last answer to a question: the time
  -- a person spends answering (confirm() holds Neovim meanwhile) is not the server's.
  local started, interrupted = now(), false
  while not (done or closed) do
    local left = M.config.timeout - (now() - math.max(started, answered_at or started))
    if left <= 0 then break end
    local _, why = vim.wait(math.ceil(left), function() return done or closed end, 10)
    if why == -2 then interrupted = true; break end  -- Ctrl-C
  end
  if not done then
    if closed then
      return nil, string.format("the Coffer server stopped (exit status %s) before it answered %s", tostring(exit_code), method)
    end
    if id then pcall(client.notify, "$/cancelRequest", { id = id }) end
    if interrupted then return nil, string.format("interrupted: %s was cancelled", method) end
    return nil, string.format("no answer to %s within %d s", method, M.config.timeout / 1000)
  end
  if failure then
    local message = failure.message or tostring(failure)
    if type(failure.data) == "table" and failure.data.kind then
      return nil, message, failure.data.kind
    end
    return nil, message
  end
  if result == vim.NIL then result = nil end
  -- Done, but not all of it (attributes a copy could not keep): said, as every front end says it.
  if type(result) == "table" and type(result.warnings) == "table" then
    for _, warning in ipairs(result.warnings) do
      vim.notify("coffer: " .. tostring(warning.message), vim.log.levels.WARN)
    end
  end
  return result, nil
end

--- `request`, raising Coffer's message as a Lua error (for commands).
function M.call(method, params)
  local result, err, kind = M.request(method, params)
  if err then error({ message = err, kind = kind }, 0) end
  return result
end

--- Ends the session: `shutdown`, `exit`, and the server stops.
function M.stop()
  if not rpc then return end
  stopping = true
  local client = rpc
  local done = false
  client.request("shutdown", nil, function() done = true end)
  vim.wait(2000, function() return done or closed end, 10)
  client.notify("exit", nil)
  vim.wait(1000, function() return closed end, 10)
  if not closed then vim.loop.kill(client.pid, 15) end
  rpc, stopping = nil, false
end

function M.running() return rpc ~= nil end

--- The process started (a server, or the relay to one), while it runs.
function M.pid() return rpc and rpc.pid end

return M
