"""OAuth 2.1 for the HTTP transports: the client side, and the resource server in ``server``."""
