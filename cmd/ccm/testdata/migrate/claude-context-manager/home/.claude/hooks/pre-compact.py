#!/usr/bin/env python3
# pre-compact (claude-context-manager)
