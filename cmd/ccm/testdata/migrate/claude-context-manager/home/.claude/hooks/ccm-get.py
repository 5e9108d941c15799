#!/usr/bin/env python3
# ccm-get (claude-context-manager)
