from django.urls import path

from .views import InvitationViewSet, MemberViewSet, ProjectCollectionViewSet, ProjectViewSet, StatusViewSet

PROJECT = "projects/<id:project_id>"
STATUS = f"{PROJECT}/statuses/<slug:slug>"
MEMBER = f"{PROJECT}/members/<id:user_id>"

urlpatterns = [
    path("projects", ProjectCollectionViewSet.as_view({"get": "list", "post": "create"}), name="project-list"),
    path(PROJECT, ProjectViewSet.as_view({"get": "retrieve"}), name="project-detail"),
    path(f"{PROJECT}/update", ProjectViewSet.as_view({"post": "update"}), name="project-update"),
    path(f"{PROJECT}/statuses", StatusViewSet.as_view({"get": "statuses", "post": "create_status"}),
         name="project-statuses"),
    path(f"{PROJECT}/statuses/sort", StatusViewSet.as_view({"post": "sort_statuses"}), name="status-sort"),
    path(f"{STATUS}/update", StatusViewSet.as_view({"post": "update_status"}), name="status-update"),
    path(f"{STATUS}/delete", StatusViewSet.as_view({"post": "delete_status"}), name="status-delete"),
    path(f"{PROJECT}/members", MemberViewSet.as_view({"get": "members"}), name="project-members"),
    path(f"{MEMBER}/update", MemberViewSet.as_view({"post": "update_member"}), name="member-update"),
    path(f"{PROJECT}/invitations", InvitationViewSet.as_view({"get": "invitations", "post": "invite"}),
         name="project-invitations"),
    path("invitations/<id:invitation_id>/revoke", InvitationViewSet.as_view({"post": "revoke"}),
         name="invitation-revoke"),
    path(f"{MEMBER}/delete", MemberViewSet.as_view({"post": "remove_member"}), name="member-delete"),
]
