from suzent_cli.cli.app import main

main()
