#!/usr/bin/env python3
# claude-cache-prune (claude-context-manager)
