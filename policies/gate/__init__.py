"""The intent gate's pure rules: chitchat, harm, vague queries."""
