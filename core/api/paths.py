API_PREFIX = "/api/"


def is_api(request) -> bool:
    """Everything under /api/ answers JSON, whatever layer answers."""
    return request.path.startswith(API_PREFIX)
