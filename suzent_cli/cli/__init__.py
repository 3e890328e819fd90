"""The command-line layer: parse arguments, call the library, render. No file or table is opened here."""
