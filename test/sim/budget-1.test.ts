import { budgetPart } from './budget.ts';

budgetPart(1);
