"""An environment as an HTTP service: server, client, launcher."""
