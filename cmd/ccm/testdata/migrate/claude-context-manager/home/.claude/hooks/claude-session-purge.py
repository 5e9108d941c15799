#!/usr/bin/env python3
# claude-session-purge (claude-context-manager)
