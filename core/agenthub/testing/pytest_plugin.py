"""pytest plugin: see agenthub.testing."""
