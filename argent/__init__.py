"""argent: replay recorded UI flows on real devices, locally or over a link to a tool-server."""

__version__ = "0.1.0"
