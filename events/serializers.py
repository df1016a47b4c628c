from rest_framework import serializers

from core.time import TIMESTAMP_FORMAT


class EventFeedInput(serializers.Serializer):
    after = serializers.IntegerField(required=False, default=0, min_value=0,
                                     help_text="Return the events with a greater seq (0: from the oldest kept)")
    limit = serializers.IntegerField(required=False, default=100, min_value=1, max_value=500)


class ActorOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class EventOutput(serializers.Serializer):
    """A kept frame exactly as the board socket sent it, plus when it happened; the other keys depend on
    `event` (decisions.md, "Event log")."""

    event = serializers.CharField()
    project_id = serializers.IntegerField()
    seq = serializers.IntegerField()
    actor = ActorOutput()
    occurred_at = serializers.DateTimeField(format=TIMESTAMP_FORMAT, help_text="When the event happened: the same "
                                            "on the board socket, here and in webhook messages")
    created_at = serializers.DateTimeField(format=TIMESTAMP_FORMAT)


class EventFeedOutput(serializers.Serializer):
    events = EventOutput(many=True)
    next_after = serializers.IntegerField(help_text="The `after` of the next page: the last seq returned "
                                                    "(or the given `after` when none)")
    has_more = serializers.BooleanField()
