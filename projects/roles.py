from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer"
    CONTRIBUTOR = "contributor"
    EDITOR = "editor"
    DEVELOPER = "developer"  # legacy: exactly the rights of editor, still shown as "developer"
    MANAGER = "manager"


RANK = {Role.VIEWER: 1, Role.CONTRIBUTOR: 2, Role.EDITOR: 3, Role.DEVELOPER: 3, Role.MANAGER: 4}


def rank_of(role: str) -> int:
    return RANK[Role(role)]
