from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .forms import LoginForm, QueuedPasswordResetForm
from .lockout import counted_reset, rate_limited_login

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/login/", rate_limited_login(
        auth_views.LoginView.as_view(redirect_authenticated_user=True, authentication_form=LoginForm)), name="login"),
    path("accounts/logout/", views.closing_session_sockets(auth_views.LogoutView.as_view()), name="logout"),
    path("profile/", views.profile, name="profile"),
    path("accounts/password_reset/", counted_reset(auth_views.PasswordResetView.as_view(
        form_class=QueuedPasswordResetForm, email_template_name="registration/password_reset_email.txt",
        html_email_template_name="registration/password_reset_email.html")), name="password_reset"),
    path("accounts/password_reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("accounts/reset/<uidb64>/<token>/", views.ResetPasswordConfirmView.as_view(), name="password_reset_confirm"),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path("profile/api-access/", views.api_access, name="api-access"),
    path("profile/api-access/<id:token_id>/revoke", views.revoke_api_token, name="api-access-revoke"),
]
