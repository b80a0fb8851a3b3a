"""The aiohttp tool-server."""
