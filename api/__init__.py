"""graphmem.api: the FastAPI service (routes, schemas, auth, settings) - see the REST issue."""
