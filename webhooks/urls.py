from django.urls import path

from .views import ProjectWebhooksViewSet, WebhookViewSet

WEBHOOK = "webhooks/<id:webhook_id>"

urlpatterns = [
    path("projects/<id:project_id>/webhooks", ProjectWebhooksViewSet.as_view({"get": "list", "post": "create"}),
         name="webhook-list"),
    path(WEBHOOK, WebhookViewSet.as_view({"get": "retrieve"}), name="webhook-detail"),
    path(f"{WEBHOOK}/update", WebhookViewSet.as_view({"post": "update"}), name="webhook-update"),
    path(f"{WEBHOOK}/delete", WebhookViewSet.as_view({"post": "destroy"}), name="webhook-delete"),
    path(f"{WEBHOOK}/rotate-secret", WebhookViewSet.as_view({"post": "rotate_secret"}), name="webhook-rotate-secret"),
    path(f"{WEBHOOK}/ping", WebhookViewSet.as_view({"post": "ping"}), name="webhook-ping"),
    path(f"{WEBHOOK}/deliveries", WebhookViewSet.as_view({"get": "deliveries"}), name="webhook-deliveries"),
    path(f"{WEBHOOK}/deliveries/<id:delivery_id>/redeliver", WebhookViewSet.as_view({"post": "redeliver"}),
         name="webhook-redeliver"),
]
