"""`ortlint server`: a Language Server Protocol server over standard input and output.

    session.py   what to analyze and how: the workspace's settings, the open documents as
                 overlays over the files on disk, one run (cached per file), findings per file
    convert.py   findings -> LSP diagnostics (the trace and the leaking exits as related
                 information), fixes and suppressions -> code actions (positions in UTF-16)
    lsp.py       the pygls server: open, change (debounced), save, close, code actions,
                 configuration

The server stands above the orchestration layer and below the command line (`cli/` starts
it). It has no language of its own: any file the front-end registry reads is analyzed, so a
language added to `frontends/registry.py` is served without a change here.
"""
