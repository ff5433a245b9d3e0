-- Variant `durable-cursor` (issue 28): a successor finds the cursor its predecessor left.
-- The seeds' musician keeps last_processed_message_id in memory (000 "Message Deduplication"),
-- so a successor cannot tell which conductor messages its predecessor already handled and
-- handles them again. Under this variant every read of new conductor messages is
-- `send_receipt` (scenarios/protocol.sql): an atomic INSERT of a `RECEIPT:` message that
-- returns the messages it receipts. The successor reads the task's messages with their text
-- so it can find the latest receipt of the session the row named before its claim.

-- name: read_task_messages
SELECT id, from_session, message_type, timestamp, message
FROM orchestration_messages
WHERE task_id = :task_id
ORDER BY id;
