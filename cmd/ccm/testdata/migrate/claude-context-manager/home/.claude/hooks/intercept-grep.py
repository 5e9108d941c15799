#!/usr/bin/env python3
# intercept-grep (claude-context-manager)
