"""Web Push to the installed page (issue 47): subscriptions per browser per user, the VAPID keys
Navi signs with, and the sender that encrypts (RFC 8291, aes128gcm) and delivers (RFC 8292 VAPID)
notifications off the turn's path, removing subscriptions a push service says are gone. See
docs/notifications.md."""

from navi.push.models import PushMessage, PushStore, PushSubscription, SubscriptionError
from navi.push.store import InMemoryPushStore

__all__ = ["InMemoryPushStore", "PushMessage", "PushStore", "PushSubscription", "SubscriptionError"]
