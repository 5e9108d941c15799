#!/usr/bin/env python3
# intercept-bash (claude-context-manager)
