from sitegen.cli import entry

entry()
