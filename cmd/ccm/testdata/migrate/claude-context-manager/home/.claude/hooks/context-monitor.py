#!/usr/bin/env python3
# context-monitor (claude-context-manager)
