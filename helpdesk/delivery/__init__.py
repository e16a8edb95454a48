"""The outbox: getting outgoing messages to their channel exactly once (one `helpdesk.Delivery` per message).

Modules, lowest first (each imports only those above it, so there is no import cycle):
- `outbox`: the rows (create, publish marks, the sweeper's claim, leases);
- `dispatch`: sending one message through its inbox's channel, resuming split messages;
- `outcomes`: recording the end of a delivery (sent, failed for good, retrying);
- `send`: one delivery attempt under a lease (the body of the delivery task);
- `worker`: the Celery task `message_deliver`;
- `publish`: putting the task on the queue after commit, and the outbox sweep.
"""
