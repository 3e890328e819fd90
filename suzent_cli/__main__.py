from suzent_cli.cli.app import main

raise SystemExit(main())
