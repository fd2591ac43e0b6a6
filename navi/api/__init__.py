"""The HTTP and WebSocket surface: app factory, routes per resource, the streaming protocol."""
