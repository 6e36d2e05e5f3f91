"""Conformance checks and a pytest plugin for environment plugins."""
