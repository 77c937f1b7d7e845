// name: schema/event_window_key
// dialect: falkordb
// purpose: range index to find an event window by (namespace, key); it also makes the label
//          known before the first window is written (on a graph that has never seen the
//          label, concurrent MERGEs of counter/count_event each created a window)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (w:GraphmemWindow) ON (w.namespace, w.key)
