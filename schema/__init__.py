"""Revision pins: ``pins.toml`` names the spec commit, URL and sha256 of every schema we generate."""
