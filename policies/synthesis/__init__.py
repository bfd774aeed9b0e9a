"""Pure decisions from findings to a report: sufficiency, context, drafts."""
