-- Appends a batch of events to a response's trajectory: advances the counters on the response row
-- (which also serializes concurrent writers) and inserts the rows numbered from them, as one call.
-- A function keeps its two statements planned for the connection's life; the same work written as
-- one statement with a CTE was parsed and planned again for every batch (on PGlite, in the
-- server's own thread). Returns no row when the response does not exist.
CREATE FUNCTION append_response_events(p_response_id text, p_rows jsonb, p_events integer, p_frames integer)
RETURNS TABLE (session_id text, frame_base integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_base integer;
  v_frame_base integer;
  v_session text;
BEGIN
  UPDATE responses AS r
     SET next_seq = r.next_seq + p_events, next_frame_seq = r.next_frame_seq + p_frames, updated_at = now()
   WHERE r.id = p_response_id
  RETURNING r.next_seq - p_events, r.next_frame_seq - p_frames, r.session_id INTO v_base, v_frame_base, v_session;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  INSERT INTO response_events (response_id, session_id, seq, frame_seq, type, data, actor_user_id, transport)
  SELECT p_response_id, v_session, v_base + v.o, v_frame_base + v.f, v.t, v.d, v.a, v.tr::transport
    FROM jsonb_to_recordset(p_rows) AS v(o int, f int, t text, d jsonb, a text, tr text)
   ORDER BY v.o;
  session_id := v_session;
  frame_base := v_frame_base;
  RETURN NEXT;
END
$$;
