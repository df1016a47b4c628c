import re

# Under /api/, however many slashes a client doubles on the way (`//api//v1//projects` is an API path
# that leads nowhere: a JSON 404, not the site's HTML page).
API_PATH = re.compile(r"/+api/")


def is_api(request) -> bool:
    """Everything under /api/ answers JSON, whatever layer answers."""
    return API_PATH.match(request.path) is not None
