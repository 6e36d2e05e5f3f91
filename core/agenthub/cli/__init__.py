"""The ``agenthub`` command line. Each sub-command is a CommandSpec registered through the hooks."""
