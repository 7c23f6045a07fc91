/** How the crawler introduces itself to the sites it reads (and to their robots.txt). */
export const CRAWLER_USER_AGENT = 'VoiceAssistantKnowledgeBot/1.0 (+knowledgebase crawler)';
