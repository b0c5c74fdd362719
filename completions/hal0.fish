complete --keep-order --exclusive --command hal0 --arguments "(COMPLETE=fish hal0 -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
