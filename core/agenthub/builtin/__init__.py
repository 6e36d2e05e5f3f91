"""Pieces that ship with agenthub, registered through the same hooks as any plugin."""
