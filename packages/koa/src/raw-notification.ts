// A notification as a host received it and the body limit of the `notify_url` endpoints: declared
// once, in @scanauth/core (http/raw-notification.ts), which every package here depends on.
export { DEFAULT_NOTIFY_MAX_BODY_BYTES, type RawNotificationHandler, type RawNotificationRequest } from '@scanauth/core'
