from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .forms import LoginForm
from .lockout import rate_limited_login

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", rate_limited_login(
        auth_views.LoginView.as_view(redirect_authenticated_user=True, authentication_form=LoginForm)), name="login"),
    path("accounts/logout/", views.closing_session_sockets(auth_views.LogoutView.as_view()), name="logout"),
    path("profile/", views.profile, name="profile"),
    path("profile/api-access/", views.api_access, name="api-access"),
    path("profile/api-access/<id:token_id>/revoke", views.revoke_api_token, name="api-access-revoke"),
]
