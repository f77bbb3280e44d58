-- tests/lsp/neovim_client.lua — run by test_neovim.py inside `nvim --headless -u NONE`: Neovim's
-- built-in LSP client starts pure-lsp on real examples as a user's config would (docs/tooling.md),
-- then a diagnostic, a hover and a go-to-definition are done the way a user does them (the
-- vim.lsp.buf functions a key map calls), and what arrived is written as JSON to PURE_NVIM_OUT.
-- Every wait is bounded (vim.wait with a timeout). Inputs come from the environment:
--   PURE_LSP        the pure-lsp binary
--   PURE_NVIM_BAD   a .pure file with compile errors
--   PURE_NVIM_GOOD  a .pure file without errors
--   PURE_NVIM_HOVER "LINE:COL" (1-based line, 0-based byte column) of a name to hover over
--   PURE_NVIM_JUMP  "LINE:COL" of a name whose definition to jump to
--   PURE_NVIM_OUT   where to write the results
local out = { steps = {} }
local function done()
  vim.fn.writefile({ vim.fn.json_encode(out) }, os.getenv('PURE_NVIM_OUT'))
  vim.cmd('qa!')
end
local function at(spec)
  local line, col = spec:match('^(%d+):(%d+)$')
  return { tonumber(line), tonumber(col) }
end
local wait_ms = 10000

-- the configuration docs/tooling.md gives, with start_client (Neovim 0.7 has no vim.lsp.start)
local client_id
local function attach()
  if not client_id then
    client_id = vim.lsp.start_client({
      name = 'pure-lsp',
      cmd = { os.getenv('PURE_LSP') },
      root_dir = vim.fn.getcwd(),
    })
  end
  vim.lsp.buf_attach_client(0, client_id)
end
vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, { pattern = '*.pure', callback = attach })

local ok, err = pcall(function()
  -- 1. a diagnostic: the example with errors
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('PURE_NVIM_BAD')))
  table.insert(out.steps, 'opened bad')
  vim.wait(wait_ms, function() return #vim.diagnostic.get(0) > 0 end, 20)
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.diagnostics, { lnum = d.lnum, col = d.col, message = d.message, severity = d.severity })
  end

  -- 2. a hover: the float that vim.lsp.buf.hover() opens
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('PURE_NVIM_GOOD')))
  table.insert(out.steps, 'opened good')
  vim.wait(wait_ms, function() return #vim.lsp.buf_get_clients(0) > 0 end, 20)
  local main_win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_cursor(main_win, at(os.getenv('PURE_NVIM_HOVER')))
  vim.lsp.buf.hover()
  local float
  vim.wait(wait_ms, function()
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(w).relative ~= '' then
        float = w
        return true
      end
    end
    return false
  end, 20)
  if float then
    out.hover = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, false)
    vim.api.nvim_win_close(float, true)
  end
  vim.api.nvim_set_current_win(main_win)

  -- 3. a definition jump: the cursor moves to the declaration
  local from = at(os.getenv('PURE_NVIM_JUMP'))
  vim.api.nvim_win_set_cursor(0, from)
  vim.lsp.buf.definition()
  vim.wait(wait_ms, function() return vim.api.nvim_win_get_cursor(0)[1] ~= from[1] end, 20)
  out.jump = vim.api.nvim_win_get_cursor(0)
  out.jump_file = vim.api.nvim_buf_get_name(0)

  -- the server stops when the client does
  vim.lsp.stop_client(client_id)
  vim.wait(wait_ms, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
  out.stopped = vim.lsp.get_client_by_id(client_id) == nil
end)
if not ok then out.error = tostring(err) end
done()
