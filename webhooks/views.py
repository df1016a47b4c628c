from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from . import selectors, services
from .models import Delivery, Webhook
from .serializers import CreateWebhookInput, DeliveryListInput, DeliveryOutput, UpdateWebhookInput, WebhookOutput

SECRET = serializers.CharField(help_text="The signing secret (`whsec_…`): shown this once, keep it")
WEBHOOK = envelope("WebhookEnvelope", webhook=WebhookOutput())
DELIVERY_QUEUED = envelope("DeliveryQueued", delivery=DeliveryOutput())


def _webhook(webhook: Webhook, **extra) -> dict:
    return {"webhook": WebhookOutput(webhook).data, **extra}


def _queued(delivery: Delivery) -> Response:
    return Response({"delivery": DeliveryOutput(delivery).data}, status=status.HTTP_202_ACCEPTED)


class ProjectWebhooksViewSet(ProjectScopedViewSet):
    """/projects/{id}/webhooks: the project's endpoints, for its managers."""

    required_roles = {"list": Role.MANAGER, "create": Role.MANAGER}

    @extend_schema(responses={200: envelope("WebhookList", webhooks=WebhookOutput(many=True)),
                              **error_responses(401, 403, 404)})
    def list(self, request, project_id):
        """List the project's webhooks."""
        webhooks = selectors.project_webhooks(project_id=self.project.pk)
        return Response({"webhooks": WebhookOutput(webhooks, many=True).data})

    @extend_schema(
        description="Register an endpoint that receives the project's events as signed POSTs. The answer "
                    "carries the signing secret, which is never shown again (see rotate-secret).",
        request=CreateWebhookInput,
        responses={201: envelope("WebhookCreated", webhook=WebhookOutput(), secret=SECRET),
                   **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        """Create a webhook."""
        data = validated(CreateWebhookInput, request.data)
        webhook, secret = services.create_webhook(project=self.project, actor=request.user, **data)
        return Response(_webhook(webhook, secret=secret), status=status.HTTP_201_CREATED)


class WebhookViewSet(ProjectScopedViewSet):
    """/webhooks/{webhook_id}/…: the webhook, then its project's membership; managers only."""

    project_of = "project_id"
    not_found_message = "webhook not found"
    required_roles = {action: Role.MANAGER for action in
                      ("retrieve", "update", "destroy", "rotate_secret", "ping", "deliveries", "redeliver")}
    query_parameters = {"deliveries": DeliveryListInput}

    def find_object(self) -> Webhook:
        return selectors.webhook(webhook_id=self.kwargs["webhook_id"])

    @extend_schema(responses={200: WEBHOOK, **error_responses(401, 403, 404)})
    def retrieve(self, request, webhook_id):
        """Get a webhook."""
        return Response(_webhook(self.object))

    @extend_schema(description="Change what is sent; `active: false` stops deliveries (those waiting fail), "
                               "`active: true` resumes them and clears `disabled_reason`.",
                   request=UpdateWebhookInput, responses={200: WEBHOOK, **error_responses(401, 403, 404, 422)})
    def update(self, request, webhook_id):
        """Update a webhook."""
        changes = validated(UpdateWebhookInput, request.data)
        return Response(_webhook(services.update_webhook(webhook=self.object, **changes)))

    @extend_schema(request=None, responses={200: envelope("WebhookDeleted", success=True),
                                            **error_responses(401, 403, 404)})
    def destroy(self, request, webhook_id):
        """Delete a webhook and its deliveries."""
        services.delete_webhook(webhook=self.object)
        return Response({"success": True})

    @extend_schema(description="A new signing secret, shown this once; for the next 24 hours every delivery is "
                               "signed with both the new and the previous secret.",
                   request=None, responses={200: envelope("WebhookSecretRotated", webhook=WebhookOutput(),
                                                          secret=SECRET),
                                            **error_responses(401, 403, 404)})
    def rotate_secret(self, request, webhook_id):
        """Rotate a webhook's secret."""
        webhook, secret = services.rotate_secret(webhook=self.object)
        return Response(_webhook(webhook, secret=secret))

    @extend_schema(description='Send a `{"event": "webhook.ping", "project_id", "webhook_id", "occurred_at"}` message now. '
                               "422 when the webhook is not active.",
                   request=None, responses={202: DELIVERY_QUEUED, **error_responses(401, 403, 404, 422)})
    def ping(self, request, webhook_id):
        """Ping a webhook."""
        return _queued(services.ping_webhook(webhook=self.object))

    @extend_schema(parameters=[DeliveryListInput],
                   responses={200: envelope("DeliveryList", deliveries=DeliveryOutput(many=True)),
                              **error_responses(401, 403, 404, 422)})
    def deliveries(self, request, webhook_id):
        """List a webhook's deliveries, newest first."""
        query = validated(DeliveryListInput, request.query_params)
        deliveries = selectors.webhook_deliveries(webhook=self.object, limit=query["limit"])
        return Response({"deliveries": DeliveryOutput(deliveries, many=True).data})

    @extend_schema(description="Send the delivery's message again now (the same `webhook-id` and body), as a new "
                               "delivery with its own retries. 422 when the webhook is not active.",
                   request=None, responses={202: DELIVERY_QUEUED, **error_responses(401, 403, 404, 422)})
    def redeliver(self, request, webhook_id, delivery_id):
        """Redeliver a message."""
        delivery = selectors.webhook_delivery(webhook=self.object, delivery_id=delivery_id)
        return _queued(services.redeliver(delivery=delivery))
