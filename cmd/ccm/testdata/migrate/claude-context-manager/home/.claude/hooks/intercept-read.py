#!/usr/bin/env python3
# intercept-read (claude-context-manager)
