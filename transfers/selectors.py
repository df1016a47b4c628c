from django.db.models import Q
from django.http import Http404

from accounts.models import User
from projects.roles import Role

from .models import Job


def job_for(*, user: User, job_id: int) -> Job:
    """The job, for whoever started it or a manager of its project; anyone else: 404, as if there were none."""
    job = (Job.objects.filter(pk=job_id)
           .filter(Q(created_by=user) | Q(project__memberships__user=user, project__memberships__role=Role.MANAGER))
           .select_related("project").first())
    if job is None:
        raise Http404("job not found")
    return job
