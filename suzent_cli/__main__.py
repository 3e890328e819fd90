from suzent_cli.cli.fasthook import main  # the hooks' fast path first, then the app (typer) if need be

raise SystemExit(main())
