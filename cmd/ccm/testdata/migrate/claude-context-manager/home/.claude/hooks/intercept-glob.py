#!/usr/bin/env python3
# intercept-glob (claude-context-manager)
